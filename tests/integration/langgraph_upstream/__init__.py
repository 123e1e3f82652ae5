"""LangGraph's own store tests, adapted to run against memory-pg's LangGraph store."""
