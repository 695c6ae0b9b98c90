# D[scalar]: the primal result and what its backpropagator reads
def scalar_chad(x, y):
    # line 15: z = x * y + math.sin(x)
    mul = x * y
    sin = math.sin(x)
    z = mul + sin
    truediv = z / y  # line 16: return z / y
    return (truediv, (y, truediv, x))


# run: the backpropagator of scalar, cotangents of its parameters (slots x=0, y=1)
def scalar_bp(saved, d):
    y, truediv, x = saved  # the values of the forward pass it reads
    # line 16: return z / y
    dz = d / y if d else 0.0
    dy = -(d * truediv) / y if d else 0.0
    # line 15: z = x * y + math.sin(x)
    dx = dz * math.cos(x)
    dx += dz * y
    dy += dz * x
    return (dx, dy)
