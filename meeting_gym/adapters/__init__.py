"""Adapters to the frameworks users train and serve in, one module per framework.

Each adapter imports its framework lazily (``import meeting_gym.adapters.rllib`` works
without Ray; what needs a framework imports it when called and says how to install it),
and only translates: it calls the env's own episode engine, masks and rubric, so the
reward a framework sees is the env's reward, never a re-implementation of a rule.

* :mod:`.openenv`: an OpenEnv server and clients (``pip install "meeting-gym[serve]"``);
* :mod:`.trl`: TRL's GRPOTrainer (``".[trl]"``);
* :mod:`.verifiers`: verifiers 0.4 tasksets and 0.3.x ``load_environment`` (``".[verifiers]"``);
* :mod:`.rllib`: Ray RLlib (``".[rllib]"``).
"""
