"""The suite's root. Being here puts ``tests/`` on ``sys.path``, so test modules import the shared
helpers from ``support``: one fake clock (``support.clock``), one fake GitHub server spoken to over
HTTP through PyGithub (``support.github_fake``), one recording GitHub port for the service's jobs
(``support.service.RecordingPort``), one fake LLM server (``support.llm_fake``).

Shared fixtures are registered here once, as plugins; test modules use them by name and never
import them (an imported fixture is an unused name that the same-named argument shadows)."""

pytest_plugins = ["support.github"]
