// Hearth never sends email; the messages it would have sent wait here so the admin can open the links.

import { api } from './api.js';
import { emptyState, h, icon } from './dom.js';

const kinds = {
  PASSWORD_RESET: 'Password reset',
  VERIFY_EMAIL: 'Email verification',
  EMAIL_SIGNIN: 'Sign-in link',
  VERIFY_AND_CHANGE_EMAIL: 'Email change',
  RECOVER_EMAIL: 'Email recovery',
};

export function createOutbox(project) {
  const list = h('ul', { id: 'outbox', class: 'outbox-list', 'aria-label': 'Emails in the outbox' });
  const refresh = h('button', { id: 'outbox-refresh', type: 'button', class: 'icon-button', 'aria-label': 'Reload the outbox', title: 'Reload' }, icon('refresh'));
  const element = h('section', { class: 'panel outbox-panel', id: 'outbox-panel' },
    h('header', { class: 'panel-header' }, h('h2', {}, 'Outbox'), refresh),
    h('p', { class: 'panel-intro' }, 'Emails Hearth would have sent: password resets, address verifications and sign-in links. Open a link to act as the user.'),
    list);

  async function reload() {
    try {
      const answer = await api.get(`/console/api/auth/emulator/v1/projects/${encodeURIComponent(project)}/oobCodes`);
      // Newest first: the one just sent is the one wanted.
      const codes = [...(answer.oobCodes || [])].reverse();
      if (!codes.length) {
        list.replaceChildren(h('li', { class: 'outbox-empty' }, emptyState('The outbox is empty.',
          'Send a password reset from a user\'s row, or let your app send a verification or sign-in email, and it shows up here.')));
        return;
      }
      list.replaceChildren(...codes.map((code) => h('li', { class: 'outbox-item', 'data-code': code.oobCode },
        h('div', { class: 'outbox-head' },
          h('span', {}, h('span', { class: 'muted' }, 'To '), h('strong', {}, code.email || '—')),
          h('span', { class: 'badge' }, kinds[code.requestType] || code.requestType)),
        h('a', { class: 'outbox-link', href: code.oobLink, target: '_blank', rel: 'noopener noreferrer' }, code.oobLink))));
    } catch (error) {
      list.replaceChildren(h('li', { class: 'outbox-empty' }, emptyState('The outbox could not be loaded.', error.message)));
    }
  }

  refresh.addEventListener('click', reload);
  return { element, reload };
}
