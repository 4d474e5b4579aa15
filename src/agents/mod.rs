//! Agent rows: what the agent in each pane is doing (working, blocked, idle, done, unknown).
