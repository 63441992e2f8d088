"""A team's workbench: the sign-in page and who you are, and the Team page's progress."""
