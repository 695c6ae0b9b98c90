# D[closure]: the primal result and what its backpropagator reads
def closure_chad(x, a):
    g = (a,)  # line 41: g = lambda t: a * t * t
    # line 42: return g(x) + g(2.0)
    g_1, g_1_saved = g_chad(g, x)
    g_2, g_2_saved = g_chad_1(g, 2.0)
    added = g_1 + g_2
    return (added, (g_2_saved, g_1_saved))


# run: the backpropagator of closure, cotangents of its parameters (slots x=0, a=1)
def closure_bp(saved, d):
    g_2_saved, g_1_saved = saved  # the values of the forward pass it reads
    # line 42: return g(x) + g(2.0)
    dg_part_1, _ = g_bp_1(g_2_saved, d)
    dg = dg_part_1
    dg_part, dx = g_bp(g_1_saved, d)
    dg = add(dg, dg_part)
    da = tuple_part(dg, 0, 0.0)  # line 41: g = lambda t: a * t * t
    return (dx, da)


# D[g]: the primal result and what its backpropagator reads
def g_chad_1(env, t):
    # line 41: g = lambda t: a * t * t
    a = env[0]
    mul = a * t
    mul_1 = mul * t
    return (mul_1, (t,))


# run: the backpropagator of g, cotangents of its parameters (slots env=0)
def g_bp_1(saved, d):
    t = saved[0]  # the values of the forward pass it reads
    # line 41: g = lambda t: a * t * t
    dmul = d * t
    da = dmul * t
    denv = {0: da}
    return (denv, None)


# D[g]: the primal result and what its backpropagator reads
def g_chad(env, t):
    # line 41: g = lambda t: a * t * t
    a = env[0]
    mul = a * t
    mul_1 = mul * t
    return (mul_1, (t, mul, a))


# run: the backpropagator of g, cotangents of its parameters (slots env=0, t=1)
def g_bp(saved, d):
    t, mul, a = saved  # the values of the forward pass it reads
    # line 41: g = lambda t: a * t * t
    dmul = d * t
    dt = d * mul
    da = dmul * t
    dt += dmul * a
    denv = {0: da}
    return (denv, dt)
