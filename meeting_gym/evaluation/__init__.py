"""Evaluation: the one runner, replay of logged episodes, episode export, held-out tables.

Nothing here trains: :mod:`meeting_gym.training` builds on it, never the other way.
"""
