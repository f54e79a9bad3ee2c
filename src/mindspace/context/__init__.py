"""Context system: token accounting (and, with the engine, components and context types)."""
