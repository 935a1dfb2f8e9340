"""Sequence to sequence with a GRU encoder and an attention GRU decoder, as the PyTorch
"Translation with a Sequence to Sequence Network and Attention" tutorial writes it: Bahdanau
(additive) attention through torch.bmm and F.softmax, padding masked with masked_fill, teacher
forcing on part of the batches, greedy decoding with topk. The task: reverse a digit sequence."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)
random.seed(0)
PAD, SOS, EOS, VOCAB, MAXLEN = 0, 1, 2, 10, 7  # digits are tokens 3..9


def make_batch(n):
    src = torch.full((n, MAXLEN), PAD, dtype=torch.long)
    tgt = torch.full((n, MAXLEN), PAD, dtype=torch.long)
    for i in range(n):
        k = random.randint(3, MAXLEN - 1)
        seq = torch.randint(3, VOCAB, (k,))
        src[i, :k] = seq
        tgt[i, :k] = seq.flip(0)
        tgt[i, k] = EOS
    return src, tgt


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys, mask):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        scores = scores.masked_fill(mask.unsqueeze(1), float("-inf"))
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, mask, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAXLEN):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs, mask
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs, mask):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs, mask)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


hidden_size = 48
encoder = EncoderRNN(VOCAB, hidden_size)
decoder = AttnDecoderRNN(hidden_size, VOCAB)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.005)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.005)
criterion = nn.NLLLoss(ignore_index=PAD)
teacher_forcing_ratio = 0.5

losses = []
for it in range(110):
    src, tgt = make_batch(32)
    mask = src == PAD
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(src)
    use_tf = random.random() < teacher_forcing_ratio
    decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, mask, tgt if use_tf else None)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), tgt.view(-1))
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    losses.append(loss.item())
    if it % 50 == 0:
        print(f"iter {it} loss {loss.item():.4f}")

encoder.eval()
decoder.eval()
with torch.no_grad():
    src, tgt = make_batch(200)
    mask = src == PAD
    enc_out, enc_hid = encoder(src)
    out, _, attn = decoder(enc_out, enc_hid, mask)
    pred = out.argmax(-1)
    keep = tgt != PAD
    token_acc = (pred[keep] == tgt[keep]).float().mean().item()
print(f"greedy token accuracy {token_acc:.3f}")
assert sum(losses[-20:]) / 20 < 0.3 * sum(losses[:20]) / 20, (losses[:5], losses[-5:])
assert token_acc > 0.8, token_acc
# Attention never looks at padding and each row sums to one.
assert float(attn.masked_select(mask.unsqueeze(1).expand_as(attn)).abs().max()) == 0.0
assert torch.allclose(attn.sum(-1), torch.ones(attn.shape[:2]), atol=1e-5)
print("ok")
