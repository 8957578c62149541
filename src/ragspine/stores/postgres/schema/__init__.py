"""Schema migrations, one module per version: ``vNNNN_<name>.py`` with an ``SQL`` script."""
