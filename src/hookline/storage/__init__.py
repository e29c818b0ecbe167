"""Storage: the schema, the engines, and the migrations. No business rules live here."""
