"""Content generation: posts, adaptations, storyboards and carousel text, stored as content records."""
