"""Adapters to the frameworks users train and serve in (OpenEnv, verifiers, TRL, RLlib).

Each adapter lives in its own module, imports its framework lazily (with an install hint
when it is missing), and calls the env's own episode engine and rubric: the reward a
framework sees is the env's reward, never a re-implementation of a rule.
"""
