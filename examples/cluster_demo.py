"""The main job. Until the parameter-server runtime lands this trains locally."""

import runpy
import sys

sys.argv = [sys.argv[0], "--steps", "30"]
runpy.run_path(__file__.replace("cluster_demo.py", "train_mlp.py"), run_name="__main__")
