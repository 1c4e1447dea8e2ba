"""The OpenEnv server app of meeting_gym (see ../openenv.yaml)."""
