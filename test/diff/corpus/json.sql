-- JSON values, paths and functions.
CREATE TABLE j (id INT PRIMARY KEY, doc JSON);
INSERT INTO j VALUES (1, '{"a": 1, "b": [1, 2, 3], "c": {"d": "x"}}'), (2, '[1, "two", null]'), (3, NULL);
SELECT id, JSON_EXTRACT(doc, '$.a') FROM j ORDER BY id;
SELECT doc->'$.c.d', doc->>'$.c.d' FROM j WHERE id = 1;
SELECT JSON_LENGTH(doc), JSON_TYPE(doc) FROM j ORDER BY id;
SELECT JSON_OBJECT('k', 1, 'l', 'v'), JSON_ARRAY(1, 'a', NULL);
SELECT JSON_CONTAINS(doc, '2', '$.b') FROM j WHERE id = 1;
SELECT JSON_KEYS(doc) FROM j WHERE id = 1;
SELECT JSON_SET(doc, '$.a', 5) FROM j WHERE id = 1;
SELECT JSON_VALID('{"a":'), JSON_VALID('[]');
INSERT INTO j VALUES (4, '{bad json');
SELECT JSON_UNQUOTE('"x\\ty"');
SELECT JSON_EXTRACT('{"a": 1.50}', '$.a');
DROP TABLE j;
-- Simple paths as MySQL reads them: a member of a non-object is no match, a position in a non-array reads it as an array of itself.
SELECT JSON_EXTRACT('[1,2,3]', '$.a'), JSON_EXTRACT('{"a":1}', '$[0]'), JSON_EXTRACT('{"a":1}', '$[1]'), JSON_EXTRACT('[1,2,3]', '$[5]'), JSON_EXTRACT('{"a b": 2}', '$."a b"'), JSON_EXTRACT('[1,[2,3]]', '$[1][0]'), JSON_EXTRACT('"s"', '$[0]');
SELECT JSON_EXTRACT('{"a":{"b":[]}}', '$.a.b'), JSON_EXTRACT('{"a":{"b":[]}}', '$.a.b[0]'), JSON_EXTRACT('{"a":[1,2]}', '$.a[*]'), JSON_EXTRACT('[1,2]', '$[0]', '$[1]');
-- JSON_LENGTH of an empty array or object is 0; JSON_VALUE gives a string's text.
SELECT JSON_LENGTH('[]'), JSON_LENGTH('{}'), JSON_LENGTH('[1, []]', '$[1]'), JSON_LENGTH('[1]', '$[5]'), JSON_LENGTH(NULL);
SELECT JSON_VALUE('{"a":"x"}', '$.a'), JSON_VALUE('{"a":5}', '$.a'), JSON_VALUE('{"a":"x\\"y"}', '$.a'), JSON_VALUE('{"a":"x"}', '$.b'), JSON_VALUE('{"a":null}', '$.a');
-- JSON_EXTRACT with several paths: the array of what they match, NULL
-- when none does (it failed with a nil pointer dereference).
SELECT JSON_EXTRACT('{"a":1}', '$.a', '$.b');
SELECT JSON_EXTRACT('{"a":1,"b":2}', '$.a', '$.b');
SELECT JSON_EXTRACT('{"a":1,"b":2}', '$.b', '$.a');
SELECT JSON_EXTRACT('{"a":1}', '$.x', '$.y');
SELECT JSON_EXTRACT('[10,20,[30,40]]', '$[1]', '$[0]', '$[2][1]');
SELECT JSON_EXTRACT('{"a":[1,2],"b":{"c":3}}', '$.a', '$.b.c');
SELECT JSON_EXTRACT(NULL, '$.a', '$.b');
SELECT JSON_EXTRACT('{"a":1}', '$.a', NULL);
CREATE TABLE jx (id INT PRIMARY KEY, doc JSON);
INSERT INTO jx VALUES (1, '{"a":1,"b":"x"}'), (2, 'null'), (3, NULL), (4, '[1,2]');
SELECT id, JSON_EXTRACT(doc, '$.a', '$.b') FROM jx ORDER BY id;
-- JSON_CONTAINS_PATH of a JSON null document and of SQL NULL.
SELECT id, JSON_CONTAINS_PATH(doc, 'one', '$.a'), JSON_CONTAINS_PATH(doc, 'all', '$', '$.a') FROM jx ORDER BY id;
SELECT JSON_CONTAINS_PATH('null', 'one', '$'), JSON_CONTAINS_PATH('null', 'one', '$.a'), JSON_CONTAINS_PATH(NULL, 'one', '$');
DROP TABLE jx;
