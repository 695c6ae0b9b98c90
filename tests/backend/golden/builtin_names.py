# D[builtin_names]: the primal result and what its backpropagator reads
def builtin_names_chad(x, y):
    # line 79: total = sum([x, y])
    tup = [x, y]
    total = sum(tup)
    saved = len(tup)  # kept for D[sum]
    pow = x ** y  # line 80: pow = x**y
    # line 81: return abs(total) + pow + max(x, y)
    absolute = abs(total)
    added = absolute + pow
    largest = max(x, y)
    added_1 = added + largest
    return (added_1, (y, x, total, pow, tup, saved))


# run: the backpropagator of builtin_names, cotangents of its parameters (slots x=0, y=1)
def builtin_names_bp(saved_1, d):
    y, x, total, pow, tup, saved = saved_1  # the values of the forward pass it reads
    # line 81: return abs(total) + pow + max(x, y)
    dx = 0.0 if y > x else d
    dy = d if y > x else 0.0
    dtotal = d if total > 0 else -d if total < 0 else 0.0
    # line 80: pow = x**y
    dx += pow_base_ct(d, x, y)
    dy += pow_exponent_ct(d, pow, x)
    # line 79: total = sum([x, y])
    dtup = sum_seq_ct(dtotal, tup, saved)
    dx += tuple_part(dtup, 0, 0.0)
    dy += tuple_part(dtup, 1, 0.0)
    return (dx, dy)
