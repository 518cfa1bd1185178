"""The suite's root: being here puts ``tests/`` on ``sys.path`` so every test file imports the
shared fakes and fixtures from ``support`` (one fake GitHub for ports, one for HTTP, one LLM fake)."""
