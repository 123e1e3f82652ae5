"""Jobs for cron: forget, consolidate, reembed (they run plans and statements)."""
