"""The API: the function transformations users call (`transforms`: `grad`, `vjp`, `source`, ...), and the
conversions between the user's values and chadpy's cotangents (`conversions`)."""
