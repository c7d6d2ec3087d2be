"""What a layer builder appends to: the default main and startup programs, program_guard, name_scope and
device_guard (Paddle keeps these in fluid.framework)."""

import contextlib

from .program import Program
from .recording import current_name_scope, switch_device, switch_name_scope

__all__ = ["default_main_program", "default_startup_program", "switch_main_program", "switch_startup_program",
           "program_guard", "name_scope", "device_guard"]


_main_program_ = Program()
_startup_program_ = Program()


def default_main_program():
    return _main_program_


def default_startup_program():
    return _startup_program_


def switch_main_program(program):
    global _main_program_
    prev = _main_program_
    _main_program_ = program
    return prev


def switch_startup_program(program):
    global _startup_program_
    prev = _startup_program_
    _startup_program_ = program
    return prev


@contextlib.contextmanager
def program_guard(main_program, startup_program=None):
    if not isinstance(main_program, Program):
        raise TypeError("program_guard: main_program must be a Program, got %s" % type(main_program).__name__)
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError("program_guard: startup_program must be a Program, got %s"
                        % type(startup_program).__name__)
    main_program = switch_main_program(main_program)
    if startup_program is not None:
        startup_program = switch_startup_program(startup_program)
    try:
        yield
    finally:
        switch_main_program(main_program)
        if startup_program is not None:
            switch_startup_program(startup_program)


@contextlib.contextmanager
def name_scope(prefix=None):
    """Records a '/'-joined scope path in each op's op_namescope attribute (Paddle's name_scope: a prefix
    used twice at one level becomes prefix_1 the second time)."""
    if not prefix:      # Paddle asserts; an empty prefix adds no level here
        yield
        return
    old = switch_name_scope(current_name_scope().child(prefix))
    try:
        yield
    finally:
        switch_name_scope(old)


@contextlib.contextmanager
def device_guard(device=None):
    """Paddle 1.8 pins ops built inside to 'cpu' or 'gpu' (for pipeline training). Here every op of a program
    runs on the executor's place, so the device is checked and otherwise has no effect."""
    if device not in ("cpu", "gpu", "", None):
        raise ValueError("device_guard: device must be 'cpu', 'gpu', '' or None, got %r" % (device,))
    old = switch_device(device)     # recorded as each op's op_device, as Paddle does
    try:
        yield
    finally:
        switch_device(old)
