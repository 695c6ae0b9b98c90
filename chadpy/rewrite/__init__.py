"""The gast-to-gast rewrites that run before lowering, each a construct spelled as simpler ones: `with`
blocks (`blocks`), element assignment as the update it means (`assignments`), copies followed to the
object they name (`copies`), views' writes given back to their base (`views`)."""
