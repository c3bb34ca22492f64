"""Services of the dashboard: the snapshot (:mod:`.snapshot`), the answers per protocol
(:mod:`.figures`) and the planner (:mod:`.planning`)."""
