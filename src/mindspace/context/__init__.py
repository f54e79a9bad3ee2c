"""Context system: components, context types and prompt assembly."""
