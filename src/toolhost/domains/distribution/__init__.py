"""Distribution: connected accounts, scheduled posts and the dispatcher that publishes them."""
