"""What a long-running process shows its operators: HTTP endpoints for metrics and probes, health
checks and log formats. No domain knowledge: the manager and the agent plug their own parts in."""
