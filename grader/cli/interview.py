"""Commands: placeholder until its owner lands them."""
commands: list = []
