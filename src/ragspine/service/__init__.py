"""The HTTP service: a FastAPI app over one :class:`~ragspine.workspace.Workspace` and its page.

``app.py`` builds the app (each route one Workspace call), ``keys.py`` keeps the API keys (hashed,
in the workspace), ``guard.py`` authenticates, authorises, limits sizes and rates, ``jobs.py``
runs and persists upload ingests, ``problems.py`` turns errors into RFC 9457 problem documents,
``static/`` is the web page. FastAPI and uvicorn come with ``pip install 'ragspine[server]'``.
"""
