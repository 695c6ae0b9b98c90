# D[closure]: the primal result and its backpropagator
def closure_chad(x, a):
    g = Closure('g', (a,))  # line 41: g = lambda t: a * t * t
    # line 42: return g(x) + g(2.0)
    g_1, g_1_pullback = g_chad(g.env, x)
    g_2, g_2_pullback = g_chad_1(g.env, 2.0)
    added = g_1 + g_2
    # run: the backpropagator of closure, cotangents of its parameters (slots x=0, a=1)
    def closure_bp(d):
        # line 42: return g(x) + g(2.0)
        dg_part_1, _ = g_2_pullback(d)
        dg = dg_part_1
        dg_part, dx = g_1_pullback(d)
        dg = add(dg, dg_part)
        da = tuple_part(dg, 0, 0.0)  # line 41: g = lambda t: a * t * t
        return (dx, da)
    return (added, closure_bp)


# D[g]: the primal result and its backpropagator
def g_chad_1(env, t):
    # line 41: g = lambda t: a * t * t
    a = env[0]
    mul = a * t
    mul_1 = mul * t
    # run: the backpropagator of g, cotangents of its parameters (slots env=0)
    def g_bp(d):
        # line 41: g = lambda t: a * t * t
        dmul = d * t
        da = dmul * t
        denv = {0: da}
        return (denv, None)
    return (mul_1, g_bp)


# D[g]: the primal result and its backpropagator
def g_chad(env, t):
    # line 41: g = lambda t: a * t * t
    a = env[0]
    mul = a * t
    mul_1 = mul * t
    # run: the backpropagator of g, cotangents of its parameters (slots env=0, t=1)
    def g_bp(d):
        # line 41: g = lambda t: a * t * t
        dmul = d * t
        dt = d * mul
        da = dmul * t
        dt += dmul * a
        denv = {0: da}
        return (denv, dt)
    return (mul_1, g_bp)
