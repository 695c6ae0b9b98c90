# D[scalar]: the primal result and its backpropagator
def scalar_chad(x, y):
    # line 15: z = x * y + math.sin(x)
    mul = x * y
    sin = math.sin(x)
    z = mul + sin
    truediv = z / y  # line 16: return z / y
    # run: the backpropagator of scalar, cotangents of its parameters (slots x=0, y=1)
    def scalar_bp(d):
        # line 16: return z / y
        dz = d / y
        dy = -(d * truediv) / y
        # line 15: z = x * y + math.sin(x)
        dx = dz * math.cos(x)
        dx += dz * y
        dy += dz * x
        return (dx, dy)
    return (truediv, scalar_bp)
