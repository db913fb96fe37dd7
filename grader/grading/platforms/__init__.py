"""Outputs for the platforms that grade: Gradescope's bundle, GitHub and
GitLab CI, Classroom 50."""
