import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostnameOfHostHeader, isLoopbackHostname } from '../../../src/server/security.ts';

describe('hostnameOfHostHeader', () => {
  it('splits a well-formed Host header into its name', () => {
    assert.equal(hostnameOfHostHeader('127.0.0.1:8080'), '127.0.0.1');
    assert.equal(hostnameOfHostHeader('[::1]:65535'), '[::1]');
    assert.equal(hostnameOfHostHeader('localhost'), 'localhost');
    assert.equal(hostnameOfHostHeader('codex.localhost:1'), 'codex.localhost');
  });

  it('refuses a port over 65535 or not made of digits', () => {
    for (const host of ['127.0.0.1:99999', '127.0.0.1:65536', 'localhost:70000', '[::1]:99999', '127.0.0.1:http', '127.0.0.1:-1']) {
      assert.equal(hostnameOfHostHeader(host), null, host);
    }
  });

  it('refuses a dotted-quad address with a part over 255', () => {
    for (const host of ['127.999.999.999', '127.0.0.256:8080', '256.0.0.1', '127.0.0.1000']) {
      assert.equal(hostnameOfHostHeader(host), null, host);
    }
    assert.equal(hostnameOfHostHeader('127.255.255.255'), '127.255.255.255');
  });
});

describe('isLoopbackHostname', () => {
  it('takes 127.0.0.0/8, localhost, ::1 and *.localhost, and only real IPv4 addresses', () => {
    for (const name of ['127.0.0.1', '127.1.2.3', '127.255.255.255', 'localhost', 'LOCALHOST', '[::1]', '::1', 'codex.localhost']) assert.equal(isLoopbackHostname(name), true, name);
    for (const name of ['127.999.999.999', '127.0.0.256', '128.0.0.1', '10.0.0.5', 'localhost.example', '127.0.0.1.nip.io']) assert.equal(isLoopbackHostname(name), false, name);
  });
});
