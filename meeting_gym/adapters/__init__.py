"""Adapters to other frameworks live here, one module per framework.

Each adapter imports its framework lazily (``import meeting_gym.adapters.rllib``
works without Ray; what needs Ray imports it when called and says how to install
it), and only translates: it calls the env's own engine, masks and rubric and
never re-implements a rule.

* :mod:`.rllib`: Ray RLlib (``pip install "meeting-gym[rllib]"``).
"""
