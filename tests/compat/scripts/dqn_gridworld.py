"""Deep Q-learning as the PyTorch DQN tutorial writes it, on a tiny corridor world instead of
CartPole (no gym): a ReplayMemory of namedtuple Transitions in a deque, epsilon-greedy action
selection with exponential decay, policy and target networks, Q(s, a) through gather, next-state
values with max(1).values over non-final states only, SmoothL1Loss, AdamW(amsgrad=True),
clip_grad_value_ and a soft update of the target network through state_dict(). Checks: the TD
loss fell and the greedy policy walks to the goal from every start."""
import math
import random
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.optim as optim

random.seed(0)
torch.manual_seed(0)
N_CELLS, GOAL = 8, 7
Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


def one_hot(pos):
    s = torch.zeros(1, N_CELLS)
    s[0, pos] = 1.0
    return s


def env_step(pos, action):  # action 0: left, 1: right
    new = max(0, min(N_CELLS - 1, pos + (1 if action == 1 else -1)))
    done = new == GOAL
    return new, (1.0 if done else -0.05), done


class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 64)
        self.layer2 = nn.Linear(64, 64)
        self.layer3 = nn.Linear(64, n_actions)

    def forward(self, x):
        x = torch.relu(self.layer1(x))
        x = torch.relu(self.layer2(x))
        return self.layer3(x)


BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 64, 0.9, 0.9, 0.05, 300, 0.01, 1e-3
policy_net = DQN(N_CELLS, 2)
target_net = DQN(N_CELLS, 2)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(5000)
steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1.0 * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(2)]], dtype=torch.long)


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return None
    transitions = memory.sample(BATCH_SIZE)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(
        tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool
    )
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()


losses = []
for i_episode in range(120):
    pos = random.randrange(N_CELLS - 1)
    state = one_hot(pos)
    for t in range(30):
        action = select_action(state)
        pos, reward, terminated = env_step(pos, action.item())
        reward = torch.tensor([reward])
        next_state = None if terminated else one_hot(pos)
        memory.push(state, action, next_state, reward)
        state = next_state
        loss = optimize_model()
        if loss is not None:
            losses.append(loss)
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[
                key
            ] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
        if terminated:
            break

first, last = sum(losses[:50]) / 50, sum(losses[-50:]) / 50
print(f"{len(losses)} updates, TD loss {first:.4f} -> {last:.4f}")
with torch.no_grad():
    greedy = policy_net(torch.eye(N_CELLS)).argmax(1)
print("greedy actions", greedy.tolist())
assert last < first, (first, last)
assert greedy[:GOAL].tolist() == [1] * GOAL, greedy
print("ok")
