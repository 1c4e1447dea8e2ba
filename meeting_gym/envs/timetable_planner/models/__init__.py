"""TimetablePlanner's torch networks for SB3 (``sb3_policy``); torch is imported only here."""
