// The app's three model calls: the agent each is, its provider, model and output
// limit, and the mustache templates it renders. packetproof's exporter
// (llm/gate/export.js) reads this file, so a model or max-tokens change here is a
// golden change that `release-check` explains by this file.
'use strict';

const CALLS = {
  releaseNotes: {
    agentId: 'release-notes',
    taskType: 'release-notes',
    promptMode: 'draft',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    maxTokens: 4000,
    system: 'release_notes.system.mustache',
    user: () => 'release_notes.user.mustache',
  },
  prLabel: {
    agentId: 'pr-label',
    taskType: 'label',
    promptMode: 'classify',
    provider: 'openai',
    model: 'gpt-5-mini',
    maxTokens: 200,
    system: 'pr_label.system.mustache',
    user: (branch) => (branch.hasBreaking ? 'pr_label.breaking.mustache' : 'pr_label.user.mustache'),
  },
  summary: {
    agentId: 'summary',
    taskType: 'summary',
    promptMode: 'summarise',
    provider: 'google',
    model: 'gemini-2.5-flash',
    maxTokens: 1000,
    system: 'summary.system.mustache',
    user: () => 'summary.user.mustache',
  },
};

module.exports = { CALLS };
