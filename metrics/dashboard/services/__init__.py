"""Services of the dashboard: the snapshot (:mod:`.snapshot`), the answers per protocol
(:mod:`.figures`), the planner (:mod:`.planning`), and the polls and plan requests that
queue the worker's part of them (:mod:`.queueing`)."""
