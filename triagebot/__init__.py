"""triagebot: triage of issues in distributed deep learning framework repositories."""

__version__ = "0.1.0"
