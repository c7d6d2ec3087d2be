"""fluid.contrib: Paddle 1.8's contributed APIs (mixed_precision, ...), each in its own submodule."""
