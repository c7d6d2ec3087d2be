"""paddle.fluid.incubate: Fleet, Paddle's high-level distributed API (`incubate.fleet`)."""
