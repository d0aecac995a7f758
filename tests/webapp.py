"""Kept so that ``from webapp import running_app`` in older tests still works: the code is in support/webapp.py."""

from support.webapp import Page, call_event, gradio_app, page_session, running_app  # noqa: F401
