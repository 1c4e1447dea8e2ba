"""``python -m meeting_gym.cli``: the ``meeting-gym`` command."""

from meeting_gym.cli import main

raise SystemExit(main())
