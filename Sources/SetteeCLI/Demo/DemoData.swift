import SetteeCore

/// The sample data set that `settee demo` loads: people and their pets, starting with the
/// three documents of the Cloudant Query guide (seed 000), in NDJSON.
enum DemoData {
  static let collectionName = "people"

  /// Seed 002's shopping list: stores and items, for the compound-key view.
  static let groceries: [JSONObject] = [
    ["_id": "g1", "store": "Safeway", "item": "tonic water", "price": 3],
    ["_id": "g2", "store": "Safeway", "item": "goldfish crackers", "price": 2.5],
    ["_id": "g3", "store": "Trader Joe's", "item": "chocolate chip cookies", "price": 4],
    ["_id": "g4", "store": "Whole Foods", "item": "cruelty-free chakra lotion", "price": 12],
    ["_id": "g5", "store": "Safeway", "item": "Zucchini", "price": 1.25],
    ["_id": "g6", "store": "Whole Foods", "item": "éclair", "price": 3.75],
  ]

  static let people = #"""
    {"_id":"mike12","name":"mike","age":12,"pet":{"species":"cat"},"comment":"Mike goes to middle school and likes reading books."}
    {"_id":"mike34","name":"mike","age":34,"pet":{"species":"dog"},"comment":"Mike is a doctor and likes reading books."}
    {"_id":"fred23","name":"fred","age":23,"pet":{"species":"cat"},"comment":"Fred works for a startup out of his home office."}
    {"_id":"amara41","name":"amara","age":41,"pet":{"species":"parrot","name":"Kiwi"},"comment":"Amara teaches chemistry and keeps a noisy parrot.","tags":["teacher","birds"]}
    {"_id":"bo7","name":"bo","age":7,"pet":{"species":"hamster"},"comment":"Bo collects stickers and builds blanket forts.","tags":["kid"]}
    {"_id":"chen29","name":"chen","age":29,"pet":{"species":"cat","name":"Mochi"},"comment":"Chen writes compilers and bakes sourdough on weekends.","tags":["engineer","baker"]}
    {"_id":"dagny52","name":"dagny","age":52,"pet":{"species":"dog","name":"Rex"},"comment":"Dagny runs a railway company and hikes with her dog.","tags":["executive","hiker"]}
    {"_id":"elif36","name":"elif","age":36,"pet":{"species":"fish"},"comment":"Elif is a doctor who paints watercolours.","tags":["doctor","painter"]}
    {"_id":"farah18","name":"farah","age":18,"comment":"Farah studies physics and has no pets yet.","tags":["student"]}
    {"_id":"goran64","name":"goran","age":64,"pet":{"species":"dog","name":"Luna"},"comment":"Goran retired from the navy and now fixes old clocks.","tags":["retired"]}
    {"_id":"hana27","name":"hana","age":27,"pet":{"species":"rabbit"},"comment":"Hana designs games and reads science fiction books.","tags":["designer","reader"]}
    {"_id":"ivan45","name":"ivan","age":45,"pet":{"species":"cat"},"comment":"Ivan is a pilot; his cat stays with the neighbours.","tags":["pilot"]}
    {"_id":"jun31","name":"jun","age":31,"pet":[{"species":"cat"},{"species":"dog"}],"comment":"Jun has a cat and a dog who get along fine.","tags":["nurse"]}
    {"_id":"kwame39","name":"kwame","age":39,"pet":{"species":"dog"},"comment":"Kwame coaches football and reads history books.","tags":["coach","reader"]}
    {"_id":"lea22","name":"léa","age":22,"pet":{"species":"cat","name":"Éclair"},"comment":"Léa étudie la médecine à Lyon.","tags":["student"]}
    {"_id":"mateo58","name":"mateo","age":58,"pet":{"species":"tortoise","name":"Speedy"},"comment":"Mateo is a retiring judge whose tortoise is older than him.","tags":["judge"]}
    {"_id":"nour33","name":"nour","age":33,"pet":{"species":"cat"},"comment":"نور مهندسة معمارية تحب القطط","tags":["architect"]}
    {"_id":"olu47","name":"olu","age":47,"comment":"Olu is a doctor at the children's hospital.","tags":["doctor"]}
    {"_id":"priya26","name":"priya","age":26,"pet":{"species":"dog","name":"Biscuit"},"comment":"Priya trains guide dogs for a charity.","tags":["trainer"]}
    {"_id":"quinn15","name":"quinn","age":15,"pet":{"species":"snake"},"comment":"Quinn plays the drums, loudly.","tags":["kid","musician"]}
    {"_id":"rosa70","name":"rosa","age":70,"pet":{"species":"cat","name":"Pepa"},"comment":"Rosa retired as a teacher and volunteers at the library.","tags":["retired","reader"]}
    {"_id":"sami44","name":"sami","age":44,"pet":{"species":"dog"},"comment":"Sami runs a bakery and gets up at four every morning.","tags":["baker"]}
    {"_id":"taro38","name":"太郎","age":38,"pet":{"species":"fish","name":"金魚"},"comment":"太郎は東京でラーメン屋を営んでいます。","tags":["cook"]}
    {"_id":"uma24","name":"uma","age":24,"pet":{"species":"cat"},"comment":"Uma is training to be a doctor and likes books about space.","tags":["student","reader"]}
    """#
}
