"""The ground floor under the data: what every package declares or configures, and nothing of the data itself.

The settings (:mod:`core.settings`), the published-protocol presets (:mod:`core.presets`), the optional installs and
their install hints (:mod:`core.extras`), the retry policy of requests to OpenAI-compatible APIs
(:mod:`core.openai_http`) and the registry every kind of extension is declared in (:mod:`core.registry`). It
imports nothing of the project but :mod:`ratings` (pure maths); every other package may import it.
"""
