"""Make a JWKS and test JWTs for `harmonia serve`'s JWT checks.

Usage: python make_jwts.py DIR ISSUER AUDIENCE

Writes DIR/jwks.json (one RSA public key) and DIR/jwks-rotated.json (that
key and a new one, as after a provider's key rotation), and prints a JSON
object of tokens: one good, one for each way a token must be refused, and
one signed with the rotated key. Uses
PyJWT and cryptography from the test virtual environment.
"""

import json
import sys
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm


def main():
    directory, issuer, audience = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    public.update({"kid": "test-key", "alg": "RS256", "use": "sig"})
    (directory / "jwks.json").write_text(json.dumps({"keys": [public]}))
    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rotated_public = json.loads(RSAAlgorithm.to_jwk(rotated.public_key()))
    rotated_public.update({"kid": "rotated-key", "alg": "RS256", "use": "sig"})
    (directory / "jwks-rotated.json").write_text(json.dumps({"keys": [public, rotated_public]}))
    now = int(time.time())
    base = {"iss": issuer, "aud": audience, "sub": "agent-1", "iat": now, "nbf": now - 10, "exp": now + 3600,
            "harmonia_workspace": "ws_demo", "harmonia_tools": ["get_job_status", "get_operator_feed"]}

    def sign(claims, signer=key, algorithm="RS256"):
        return jwt.encode(claims, signer, algorithm=algorithm, headers={"kid": "test-key"})

    tokens = {
        "jwt_good": sign(base),
        "jwt_expired": sign(dict(base, exp=now - 3600, nbf=now - 7200)),
        "jwt_not_yet": sign(dict(base, nbf=now + 3600, exp=now + 7200)),
        "jwt_wrong_audience": sign(dict(base, aud="someone-else")),
        "jwt_wrong_issuer": sign(dict(base, iss="https://evil.example")),
        "jwt_wrong_key": sign(base, signer=other),
        "jwt_no_workspace": sign({k: v for k, v in base.items() if k != "harmonia_workspace"}),
        "jwt_alg_none": jwt.encode(base, None, algorithm="none", headers={"kid": "test-key"}),
        "jwt_hs256": jwt.encode(base, public["n"], algorithm="HS256", headers={"kid": "test-key"}),
        "jwt_rotated": jwt.encode(base, rotated, algorithm="RS256", headers={"kid": "rotated-key"}),
    }
    print(json.dumps(tokens))


if __name__ == "__main__":
    main()
