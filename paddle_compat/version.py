"""Version facts in the shape of Paddle 1.8's `paddle.version` (the Fluid API level this package implements).

Scripts compare these against the Paddle release they were written for, so they name Paddle 1.8.5, whose
behaviour the project reproduces; the package's own version is `paddle_compat.__version__`.
"""

full_version = "1.8.5"
major = "1"
minor = "8"
patch = "5"
rc = "0"
istaged = True
commit = "paddle_compat"
with_mkl = "OFF"


def show():
    print("full_version:", full_version)
    print("commit:", commit)


def mkl():
    return with_mkl
