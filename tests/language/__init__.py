"""The supported language, feature by feature: gradients against finite differences and closed forms."""
