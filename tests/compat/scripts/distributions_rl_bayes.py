"""torch.distributions in the two ways tutorials use it: REINFORCE on a 5-armed Gaussian bandit
with a Categorical policy (log_prob, entropy bonus, a moving baseline), and a Bayesian linear
regression by variational inference (a mean-field Normal posterior sampled with rsample, the
ELBO's KL term from kl_divergence, Independent for the likelihood). Checks: the policy finds the
best arm, the posterior means approach the true weights, the ELBO rises."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Categorical, Independent, Normal, kl_divergence

torch.manual_seed(0)

# --- REINFORCE on a bandit ---
arm_means = torch.tensor([0.1, 0.5, 0.2, 0.9, 0.3])
policy = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 5))
opt = torch.optim.Adam(policy.parameters(), lr=0.05)
baseline = 0.0
state = torch.ones(64, 1)
rewards_seen = []
for step in range(150):
    dist = Categorical(logits=policy(state))
    actions = dist.sample()
    rewards = Normal(arm_means[actions], 0.1).sample()
    baseline = 0.9 * baseline + 0.1 * rewards.mean().item()
    loss = -(dist.log_prob(actions) * (rewards - baseline)).mean() - 0.01 * dist.entropy().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    rewards_seen.append(rewards.mean().item())
probs = F.softmax(policy(torch.ones(1, 1)), dim=-1).squeeze(0)
print(
    "policy",
    [round(p, 3) for p in probs.tolist()],
    "reward",
    rewards_seen[0],
    "->",
    rewards_seen[-1],
)
assert probs.argmax().item() == 3 and probs[3] > 0.8, probs
assert sum(rewards_seen[-10:]) / 10 > 0.85 and rewards_seen[0] < 0.6, rewards_seen[:3]

# --- Bayesian linear regression (Bayes by backprop) ---
true_w = torch.tensor([1.5, -2.0, 0.5])
X = torch.randn(200, 3)
Y = X @ true_w + 0.3 * torch.randn(200)


class BayesLinear(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mu = nn.Parameter(torch.zeros(d))
        self.rho = nn.Parameter(torch.full((d,), -3.0))
        self.prior = Normal(torch.zeros(d), torch.ones(d))

    def posterior(self):
        return Normal(self.mu, F.softplus(self.rho))

    def forward(self, x, n_samples=8):
        w = self.posterior().rsample((n_samples,))  # (S, d), differentiable
        return x @ w.T  # (N, S)


model = BayesLinear(3)
log_noise = nn.Parameter(torch.tensor(0.0))
opt = torch.optim.Adam(list(model.parameters()) + [log_noise], lr=0.05)
elbos = []
for step in range(300):
    pred = model(X)
    lik = Independent(Normal(pred.T, log_noise.exp()), 1)  # batch (S,), event (N,)
    expected_ll = lik.log_prob(Y.expand(8, -1)).mean()
    kl = kl_divergence(model.posterior(), model.prior).sum()
    elbo = expected_ll - kl
    opt.zero_grad()
    (-elbo).backward()
    opt.step()
    elbos.append(elbo.item())
post = model.posterior()
print(
    "posterior mean",
    post.mean.tolist(),
    "std",
    post.stddev.tolist(),
    "noise",
    log_noise.exp().item(),
)
assert elbos[-1] > elbos[0] + 100, (elbos[0], elbos[-1])
assert torch.allclose(post.mean, true_w, atol=0.15), post.mean
assert (post.stddev < 0.1).all()
assert abs(log_noise.exp().item() - 0.3) < 0.08
# The analytic KL agrees with a Monte Carlo estimate from samples.
q, p = Normal(torch.tensor(0.3), torch.tensor(0.8)), Normal(torch.tensor(0.0), torch.tensor(1.0))
s = q.sample((200000,))
mc = (q.log_prob(s) - p.log_prob(s)).mean()
assert abs(mc.item() - kl_divergence(q, p).item()) < 0.01
# Bernoulli: the MLE of a coin from its samples.
coin = Bernoulli(probs=torch.tensor(0.3))
flips = coin.sample((20000,))
assert abs(flips.mean().item() - 0.3) < 0.02
assert (
    abs(
        coin.entropy().item()
        - (-(0.3 * torch.log(torch.tensor(0.3)) + 0.7 * torch.log(torch.tensor(0.7)))).item()
    )
    < 1e-6
)
print("ok")
