"""PyTorch's "Defining new autograd functions" tutorial: fit sin(x) with a + b P3(c + d x) where
P3, the Legendre polynomial of degree 3, is a custom torch.autograd.Function; manual parameter
updates under torch.no_grad()."""
import math

import torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
losses = []
for t in range(2000):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    losses.append(loss.item())
    if t % 500 == 99:
        print(t, loss.item())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
assert losses[-1] < 0.1 * losses[0], (losses[0], losses[-1])

# The custom backward agrees with autograd through the same formula.
z = torch.randn(7, dtype=torch.float64, requires_grad=True)
LegendrePolynomial3.apply(z).sum().backward()
g_custom = z.grad.clone()
z.grad = None
(0.5 * (5 * z**3 - 3 * z)).sum().backward()
assert torch.allclose(g_custom, z.grad)
