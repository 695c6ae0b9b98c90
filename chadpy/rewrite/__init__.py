"""The gast-to-gast rewrites that run before lowering, each a construct spelled as simpler ones: statements
chadpy does not differentiate as calls of themselves compiled to run as written (`as_written`), `with`
blocks (`blocks`), `try` statements as attempted calls of their statements (`tries`), element assignment
as the update it means (`assignments`), copies followed to the object they name (`copies`), views' writes
given back to their base (`views`)."""
