"""Domain logic: rules and state changes.

Functions take the caller's connection and never commit: transactions belong to the caller.
"""
