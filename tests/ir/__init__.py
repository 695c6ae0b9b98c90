"""The core IR and its checker."""
