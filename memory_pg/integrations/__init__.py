"""Integrations of memory-pg with agent frameworks (Hermes Agent...)."""
