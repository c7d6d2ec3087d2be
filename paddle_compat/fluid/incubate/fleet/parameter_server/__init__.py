"""Fleet in parameter-server mode (Paddle's `incubate.fleet.parameter_server`)."""
